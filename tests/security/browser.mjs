// The gateway's security layers as a browser meets them, in headless Chromium (Debian's):
//   1. the documentation page's Authorize dialog takes a bearer token the gateway issued
//      (POST /v1/auth/token), and "Try it out" on GET /v1/me then sends it and answers 200;
//   2. a page of the gateway's own origin signs in with fetch(): the session cookie is kept
//      and read back;
//   3. a page of another site (http://localhost:PORT, served here; the gateway is
//      127.0.0.1) posts a sign-in form to the gateway: the browser says Sec-Fetch-Site:
//      cross-site and the CSRF layer answers 403, setting no cookie.
// Run by tests/openapi/check:  node security_browser.mjs BASE_URL PASSWORD
import { createServer } from "node:http";
import { chromium } from "playwright-core";

const [base, password] = process.argv.slice(2);
const fail = (message) => {
  console.error(`security browser: ${message}`);
  process.exit(1);
};
if (!password) fail("usage: security_browser.mjs BASE_URL PASSWORD");

const issued = await fetch(`${base}/v1/auth/token`, {
  method: "POST",
  body: new URLSearchParams({ username: "ada", password }),
});
if (issued.status !== 201) fail(`POST /v1/auth/token answered ${issued.status}`);
const { access_token: token } = await issued.json();

// The other site: one page whose form posts the right credentials to the gateway.
const attacker = createServer((request, response) => {
  response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  response.end(`<!doctype html><form method="post" action="${base}/v1/session">
    <input name="username" value="ada"><input name="password" value="${password}">
    <button type="submit">sign in</button></form>`);
});
await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
const attackerUrl = `http://localhost:${attacker.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // 1. Authorize, then try GET /v1/me.
  await page.goto(`${base}/docs/`, { waitUntil: "load" });
  await page.waitForSelector(".opblock", { timeout: 20000 });
  await page.locator("button.authorize").first().click();
  const scheme = page.locator(".auth-container", { hasText: "bearerAuth" });
  await scheme.locator("input").fill(token);
  await scheme.locator("button.authorize").click();
  await page.locator(".modal-ux button.close-modal").click();
  const block = page.locator(".opblock-get", {
    has: page.locator('.opblock-summary-path[data-path="/v1/me"]'),
  });
  await block.locator(".opblock-summary").click();
  await block.locator(".try-out__btn").click();
  const [me] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${base}/v1/me`),
    block.locator("button.execute").click(),
  ]);
  const sent = (await me.request().allHeaders()).authorization;
  if (sent !== `Bearer ${token}`) fail(`try it out sent Authorization ${sent}, not the token`);
  if (me.status() !== 200) fail(`try it out on /v1/me answered ${me.status()}`);
  const holder = await me.json();
  if (holder.subject !== "ada") fail(`/v1/me answered ${JSON.stringify(holder)}`);

  // 2. Same origin: sign in, read the session back with the cookie the browser kept.
  const sameOrigin = await page.evaluate(async (password) => {
    const signIn = await fetch("/v1/session", {
      method: "POST",
      body: new URLSearchParams({ username: "ada", password }),
    });
    const read = await fetch("/v1/session");
    return [signIn.status, read.status, await read.text()];
  }, password);
  if (sameOrigin[0] !== 201 || sameOrigin[1] !== 200 || !sameOrigin[2].includes('"ada"'))
    fail(`same-origin sign-in and read: ${JSON.stringify(sameOrigin)}`);

  // 3. Another site's form, in a browser with no cookie yet.
  await context.clearCookies();
  await page.goto(attackerUrl, { waitUntil: "load" });
  const [posted] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${base}/v1/session`),
    page.click('button[type="submit"]'),
  ]);
  const fetchSite = (await posted.request().allHeaders())["sec-fetch-site"];
  if (fetchSite !== "cross-site") fail(`the form post said Sec-Fetch-Site ${fetchSite}`);
  if (posted.status() !== 403) fail(`a cross-site form post answered ${posted.status()}, not 403`);
  const cookies = await context.cookies(base);
  if (cookies.some((c) => c.name === "gateway-session"))
    fail("the refused cross-site post set a session cookie");
  if (errors.length) fail(`page errors: ${errors.join("; ")}`);
  console.log("security browser: Authorize + try it out on /v1/me: 200; same-origin sign-in" +
              " kept its cookie; a cross-site form post: 403, no cookie");
} finally {
  await browser.close();
  attacker.close();
}
