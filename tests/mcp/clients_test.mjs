// The gateway's /mcp driven by two more clients from npm (issue #28, "Tests"): the inspector
// in CLI mode lists the tools and calls one, and the conformance suite runs its scenarios on
// a server's lifecycle and tools.
//
// Conformance scenarios (@modelcontextprotocol/conformance 0.1.13, `conformance list --server`):
//   run here      server-initialize, ping, tools-list, dns-rebinding-protection (an expected
//                 failure: conformance-baseline.yml says why)
//   do not apply  tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content,
//                 -error, -with-progress, -sampling, -elicitation, json-schema-2020-12,
//                 elicitation-sep1034-defaults, elicitation-sep1330-enums: each calls or reads
//                 a fixture tool of the reference server (test_simple_text,
//                 json_schema_2020_12_tool, ...); the gateway's tools are its routes. What they
//                 check that does apply is checked on the gateway's own tools in sdk_test.mjs
//                 (text content, isError, every inputSchema a draft 2020-12 schema).
//                 tools-call-with-logging, logging-set-level, completion-complete,
//                 resources-*, prompts-*: capabilities the endpoint does not declare.
//                 server-sse-polling, server-sse-multiple-streams: the SSE stream and session
//                 of a stateful server; this endpoint is stateless and answers JSON.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { run, startGateway } from './gateway.mjs';

const bin = join(import.meta.dirname, 'node_modules', '.bin');
const scenarios = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

describe('the gateway through the inspector CLI and the conformance suite', () => {
  let gateway;
  let results;
  before(async () => {
    gateway = await startGateway();
    results = mkdtempSync(join(tmpdir(), 'waypoint-conformance-'));
  });
  after(async () => {
    await gateway?.stop();
    if (results) rmSync(results, { recursive: true, force: true });
  });

  const inspector = (...args) => run(
    join(bin, 'mcp-inspector'), ['--cli', `${gateway.base}/mcp`, '--transport', 'http', ...args]);

  it('inspector --cli lists the tools', async () => {
    const { code, stdout, stderr } = await inspector('--method', 'tools/list');
    assert.equal(code, 0, stderr);
    const names = JSON.parse(stdout).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['getAccount', 'listOrgOrders', 'placeOrder', 'placeOrgOrder']);
  });

  it('inspector --cli calls placeOrgOrder', async () => {
    const { code, stdout, stderr } = await inspector(
      '--method', 'tools/call', '--tool-name', 'placeOrgOrder',
      '--tool-arg', 'org=acme', 'sku=KB-101', 'quantity=2', 'email=ada@example.com');
    assert.equal(code, 0, stderr);
    const result = JSON.parse(stdout);
    assert.notEqual(result.isError, true, stdout);
    assert.equal(result.structuredContent.org, 'acme');
    assert.equal(result.structuredContent.quantity, 2);
    assert.match(result.structuredContent.id, /^acme-\d+$/);
  });

  for (const scenario of scenarios) {
    it(`conformance ${scenario}`, async () => {
      const { code, stdout, stderr } = await run(join(bin, 'conformance'), [
        'server', '--url', `${gateway.base}/mcp`, '--scenario', scenario,
        '--expected-failures', join(import.meta.dirname, 'conformance-baseline.yml'),
        '--output-dir', results]);
      assert.equal(code, 0, `${stdout}\n${stderr}`);
    });
  }
});
