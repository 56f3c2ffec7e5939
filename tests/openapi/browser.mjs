// The gateway's documentation page in headless Chromium (Debian's): it loads, it lists
// every operation of /openapi.json, and "Try it out" on the typed orders route answers 201.
// Run by tests/openapi/check:  node browser.mjs BASE_URL SCREENSHOT.png
import { chromium } from "playwright-core";

const [base, screenshot] = process.argv.slice(2);
const fail = (message) => {
  console.error(`browser: ${message}`);
  process.exit(1);
};

const document = await (await fetch(`${base}/openapi.json`)).json();
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const expected = [];
for (const [path, item] of Object.entries(document.paths))
  for (const method of methods) if (item[method]) expected.push(`${method} ${path}`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/docs/`, { waitUntil: "load" });
  await page.waitForSelector(".opblock", { timeout: 20000 });

  // Every operation of the document, by method and path, is on the page.
  const shown = await page.$$eval(".opblock", (blocks) =>
    blocks.map((b) => {
      const method = b.querySelector(".opblock-summary-method")?.textContent.trim().toLowerCase();
      const path = b.querySelector(".opblock-summary-path")?.getAttribute("data-path");
      return `${method} ${path}`;
    }));
  const missing = expected.filter((op) => !shown.includes(op));
  if (missing.length) fail(`operations not shown: ${missing.join(", ")}`);
  if (shown.length !== expected.length)
    fail(`${shown.length} operations shown, the document has ${expected.length}`);

  // Try it out on POST /v1/commerce/orders.
  const block = page.locator(".opblock-post", {
    has: page.locator('.opblock-summary-path[data-path="/v1/commerce/orders"]'),
  });
  await block.locator(".opblock-summary").click();
  await block.locator(".try-out__btn").click();
  await block.locator("textarea.body-param__text").fill('{"sku": "KB-101", "quantity": 2}');
  await block.locator("button.execute").click();
  const status = block.locator(".live-responses-table tbody .response-col_status").first();
  await status.waitFor({ timeout: 20000 });
  const code = (await status.textContent()).trim();
  if (!code.startsWith("201")) fail(`try it out answered ${code}, not 201`);
  await block.scrollIntoViewIfNeeded();
  await block.screenshot({ path: screenshot });
  if (errors.length) fail(`page errors: ${errors.join("; ")}`);
  console.log(`browser: ${shown.length} operations shown; try it out on the orders route: ${code}`);
} finally {
  await browser.close();
}
