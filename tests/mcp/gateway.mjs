// What the MCP tests share: the gateway started on a free loopback port (its printed base URL
// read as tests/gateway/gateway_test.py reads it) and stopped by its PID, and a child process
// run with a time limit. tests/mcp/check copies this beside the packages it imports.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

// The token --api-token gives the gateway: GET /v1/account (tool getAccount) needs it.
export const apiToken = 'mcp-test-token';
const startTimeoutMs = 10_000;
const stopTimeoutMs = 5_000;

// Starts process.env.WAYPOINT_GATEWAY and resolves to { base, stop } once it printed
// "waypoint-gateway: N routes on http://...".
export async function startGateway() {
  const binary = process.env.WAYPOINT_GATEWAY;
  if (!binary) throw new Error('WAYPOINT_GATEWAY names the gateway (tests/mcp/check sets it)');
  const child = spawn(binary, ['--port', '0', '--quiet', '--drain-grace', '0',
                               '--api-token', apiToken],
                      { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(
      `the gateway printed no base URL in ${startTimeoutMs} ms: ${printed}${stderr}`)),
                             startTimeoutMs);
    child.stdout.on('data', (chunk) => {
      printed += chunk;
      const m = printed.match(/^waypoint-gateway: \d+ routes on (http:\/\/\S+)$/m);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code}) before it printed a base URL: ${stderr}`));
    });
  }).catch((e) => { child.kill('SIGKILL'); throw e; });
  child.stdout.resume();  // the rest of the printed block, unread
  return {
    base,
    printed: () => printed,
    // SIGTERM to its PID; SIGKILL if it has not exited in time.
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      process.kill(child.pid, 'SIGTERM');
      const timer = setTimeout(() => process.kill(child.pid, 'SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

// Runs `command` in its own process group and resolves to { code, stdout, stderr }; past
// `timeoutMs` the group (the inspector starts a second node process) is killed by its id.
export function run(command, args, timeoutMs = 20_000) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const timer = setTimeout(() => {
    stderr += `\n(killed after ${timeoutMs} ms)`;
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
