// The gateway's upload form (examples/www/upload.html) posted by headless Chromium (Debian's):
// a text field and two files chosen in the file input; the answer of POST /v1/uploads/form
// must list each part with the length and SHA-256 that node's crypto computes from the same
// bytes, and the filename the browser sent. Run by tests/openapi/check after the
// documentation page:  node form_browser.mjs BASE_URL
import { createHash } from "node:crypto";
import { chromium } from "playwright-core";

const [base] = process.argv.slice(2);
const fail = (message) => {
  console.error(`form browser: ${message}`);
  process.exit(1);
};
const sha256 = (buffer) => createHash("sha256").update(buffer).digest("hex");

// Bytes a browser must send untouched: every byte value, CRLFs and a near-boundary line.
const binary = Buffer.concat([
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  Buffer.from("\r\n------WebKitFormBoundary\r\n--\r\n"),
  Buffer.alloc(200_000, 0x61),
]);
const files = [
  { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("first line\r\nsecond\n") },
  { name: "data.bin", mimeType: "application/octet-stream", buffer: binary },
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  await page.goto(`${base}/upload.html`, { waitUntil: "load" });
  await page.fill('input[name="title"]', "from a browser");
  await page.setInputFiles('input[name="file"]', files);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/v1/uploads/form")),
    page.click('button[type="submit"]'),
  ]);
  if (response.status() !== 200) fail(`POST /v1/uploads/form answered ${response.status()}`);
  if (!response.request().headers()["content-type"]?.startsWith("multipart/form-data; boundary="))
    fail("the browser did not send multipart/form-data");
  const answer = await response.json();
  const expected = [
    { name: "title", bytes: 14, sha256: sha256(Buffer.from("from a browser")) },
    ...files.map((f) => ({
      name: "file",
      bytes: f.buffer.length,
      sha256: sha256(f.buffer),
      filename: f.name,
      content_type: f.mimeType,
    })),
  ];
  const same = JSON.stringify(answer.parts.map((p) => Object.fromEntries(Object.entries(p).sort())))
    === JSON.stringify(expected.map((p) => Object.fromEntries(Object.entries(p).sort())));
  if (!same) fail(`answer ${JSON.stringify(answer)}, expected parts ${JSON.stringify(expected)}`);
  console.log("form browser: the upload form's three parts arrived whole");
} finally {
  await browser.close();
}
