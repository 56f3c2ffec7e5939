// waypoint's phoenix_socket (through tests/app/phoenix_server) against the maintained Phoenix
// Channels client, npm's phoenix, with ws as its WebSocket (Node has none built in): it
// joins, pushes and gets replies, hears another client's broadcasts, joins a topic ending
// in '*' as that topic alone, is answered "rate limited" past its connection's rate, is
// refused by the join hook, keeps its heartbeat answered, leaves, rejoins a channel that
// crashed, sees a channel the server closes, and is refused a protocol version other than
// 2.0.x; then, with ws alone, frames phoenix.js never sends (not JSON, binary) close the
// socket.
//
// Run by tests/phoenix/check, with WAYPOINT_PHOENIX_SERVER and WAYPOINT_PHOENIX_NODE_DIR
// (build/node-phoenix).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.WAYPOINT_PHOENIX_NODE_DIR, 'package.json'));
const { Socket } = require('phoenix');
const WebSocket = require('ws');

let server;
let endpoint;
const sockets = [];

before(async () => {
  server = spawn(process.env.WAYPOINT_PHOENIX_SERVER, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`phoenix_server exited with ${code}`)));
  });
  endpoint = `ws://127.0.0.1:${port}/socket`;
});

after(() => {
  // Leaving stops each channel's rejoin timer (a refused join retries), which would keep
  // Node running.
  for (const s of sockets) {
    for (const channel of [...s.channels]) channel.leave();
    s.disconnect();
  }
  server.stdin.end();
});

// A connected client; reconnects and rejoins are slow unless a test asks otherwise.
function connect (options = {}) {
  const socket = new Socket(endpoint, {
    transport: WebSocket,
    timeout: 3000,
    reconnectAfterMs: () => 60000,
    rejoinAfterMs: () => 60000,
    ...options,
  });
  socket.connect();
  sockets.push(socket);
  return socket;
}

// The outcome of a push: {status, response}, status "ok", "error" or "timeout".
function outcome (push) {
  return new Promise((resolve) => {
    push.receive('ok', (response) => resolve({ status: 'ok', response }))
      .receive('error', (response) => resolve({ status: 'error', response }))
      .receive('timeout', () => resolve({ status: 'timeout' }));
  });
}

function next (channel, event) {
  return new Promise((resolve) => {
    const ref = channel.on(event, (payload) => { channel.off(event, ref); resolve(payload); });
  });
}

// Polls `condition` for up to `ms`.
async function until (condition, ms, what) {
  for (const end = Date.now() + ms; !condition();) {
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// `promise`, or a failure naming `what` after `ms`.
async function within (ms, promise, what) {
  let timer;
  const late = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

test('JoinsAChannelWithTheHooksResponse', async () => {
  const channel = connect().channel('room:join', { token: 't' });
  assert.deepEqual(await outcome(channel.join()), { status: 'ok', response: { topic: 'room:join' } });
  assert.equal(channel.state, 'joined');
});

test('PushIsAnsweredByTheHandler', async () => {
  const channel = connect().channel('room:push');
  assert.equal((await outcome(channel.join())).status, 'ok');
  assert.deepEqual(await outcome(channel.push('ping', { n: 1, list: ['a', 'ü'] })),
    { status: 'ok', response: { pong: { n: 1, list: ['a', 'ü'] } } });
});

test('BroadcastReachesEveryClientJoined', async () => {
  const speaker = connect().channel('room:b');
  const listener = connect().channel('room:b');
  const elsewhere = connect().channel('room:other');
  assert.equal((await outcome(speaker.join())).status, 'ok');
  assert.equal((await outcome(listener.join())).status, 'ok');
  assert.equal((await outcome(elsewhere.join())).status, 'ok');
  let strays = 0;
  elsewhere.on('shout', () => { strays += 1; });
  const heard = next(listener, 'shout');
  const echoed = next(speaker, 'shout');
  assert.equal((await outcome(speaker.push('shout', { body: 'hello' }))).status, 'ok');
  assert.deepEqual(await within(3000, heard, 'broadcast'), { body: 'hello' });
  assert.deepEqual(await within(3000, echoed, 'broadcast to its sender'), { body: 'hello' });
  assert.equal(strays, 0, 'a client of another topic heard the broadcast');
});

// Issue 44: a raw room named "sec*" heard every room it starts; a Phoenix topic is literal.
test('ATopicEndingInAStarIsThatTopicAlone', async () => {
  const starSocket = connect();
  const star = starSocket.channel('room:*');
  const speaker = connect().channel('room:literal');
  assert.deepEqual(await outcome(star.join()), { status: 'ok', response: { topic: 'room:*' } });
  assert.equal((await outcome(speaker.join())).status, 'ok');
  // Every frame the socket gets: phoenix.js hands a channel only its own topic's.
  let strays = 0;
  starSocket.onMessage((message) => { if (message.topic === 'room:literal') strays += 1; });
  const echoed = next(speaker, 'shout');
  assert.equal((await outcome(speaker.push('shout', { body: 'to room:literal' }))).status, 'ok');
  await within(3000, echoed, 'broadcast to its sender');
  const own = next(star, 'shout');
  assert.equal((await outcome(star.push('shout', { body: 'to room:*' }))).status, 'ok');
  assert.deepEqual(await within(3000, own, "room:*'s own broadcast"), { body: 'to room:*' });
  assert.equal(strays, 0, 'room:* heard a broadcast to room:literal');
});

// phoenix_server's hub: 5 broadcasts a second per connection, in bursts of 10.
test('ShoutsPastTheConnectionsRateAreAnsweredRateLimitedAndTheChannelStays', async () => {
  const channel = connect().channel('room:rate');
  assert.equal((await outcome(channel.join())).status, 'ok');
  const pushes = [];
  for (let i = 0; i < 20; i += 1) pushes.push(outcome(channel.push('shout', { n: i })));
  const outcomes = await Promise.all(pushes);
  const ok = outcomes.filter((o) => o.status === 'ok').length;
  const limited = outcomes.filter((o) => o.status === 'error');
  assert.ok(ok >= 10 && ok <= 12, `the burst of 10 went through, and little more: ${ok} ok`);
  assert.equal(ok + limited.length, 20, 'every push was answered');
  for (const o of limited) assert.deepEqual(o.response, { reason: 'rate limited' });
  assert.equal(channel.state, 'joined');
  await new Promise((resolve) => setTimeout(resolve, 400));  // two tokens back
  assert.equal((await outcome(channel.push('shout', { n: 'later' }))).status, 'ok');
});

test('JoinRefusedByTheHookIsAnError', async () => {
  const channel = connect().channel('secret:plans');
  assert.deepEqual(await outcome(channel.join()), { status: 'error', response: { reason: 'unauthorized' } });
  assert.equal(channel.state, 'errored');
});

test('HeartbeatsAreAnswered', async () => {
  const socket = connect({ heartbeatIntervalMs: 100 });
  const replies = [];
  socket.onMessage((m) => { if (m.topic === 'phoenix') replies.push(m); });
  await new Promise((resolve) => setTimeout(resolve, 650));
  assert.ok(replies.length >= 3, `${replies.length} heartbeat replies in 650 ms`);
  for (const m of replies) {
    assert.equal(m.event, 'phx_reply');
    assert.equal(m.payload.status, 'ok');
  }
  assert.ok(socket.isConnected(), 'a heartbeat went unanswered and the socket reconnected');
});

test('LeaveIsAnsweredAndStopsTheBroadcasts', async () => {
  const leaver = connect();
  const channel = leaver.channel('room:leave');
  const speaker = connect().channel('room:leave');
  assert.equal((await outcome(channel.join())).status, 'ok');
  assert.equal((await outcome(speaker.join())).status, 'ok');
  // phoenix.js takes its own leave as done at once; the server's answer comes after: the
  // leave's "ok", then phx_close.
  const heard = [];
  leaver.onMessage((m) => { if (m.topic === 'room:leave') heard.push(m); });
  assert.equal((await outcome(channel.leave())).status, 'ok');
  await until(() => heard.some((m) => m.event === 'phx_close'), 3000, 'phx_close');
  assert.deepEqual(heard.map((m) => [m.event, m.payload]),
    [['phx_reply', { status: 'ok', response: {} }], ['phx_close', {}]]);
  const own = next(speaker, 'shout');
  assert.equal((await outcome(speaker.push('shout', { body: 'anyone?' }))).status, 'ok');
  await within(3000, own, 'broadcast');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(heard.length, 2, 'a client that left still heard its topic');
});

test('ChannelThatCrashesErrorsAndIsRejoined', async () => {
  const channel = connect({ rejoinAfterMs: () => 50 }).channel('room:crash');
  assert.equal((await outcome(channel.join())).status, 'ok');
  const errored = new Promise((resolve) => channel.onError(resolve));
  channel.push('crash', {});
  await within(3000, errored, 'phx_error');
  assert.equal(channel.state, 'errored');
  // The join push keeps its first "ok", so the rejoin shows in the channel's state.
  await until(() => channel.state === 'joined', 3000, 'rejoin');
  assert.deepEqual(await outcome(channel.push('ping', {})), { status: 'ok', response: { pong: {} } });
});

test('ChannelTheServerClosesIsClosed', async () => {
  const channel = connect().channel('room:bye');
  assert.equal((await outcome(channel.join())).status, 'ok');
  const closed = new Promise((resolve) => channel.onClose(resolve));
  assert.equal((await outcome(channel.push('bye', {}))).status, 'ok');
  await within(3000, closed, 'phx_close');
  assert.equal(channel.state, 'closed');
});

test('EventOnATopicNotJoinedIsAnUnmatchedTopic', async () => {
  const socket = connect();
  const channel = socket.channel('room:nojoin');
  assert.equal((await outcome(channel.join())).status, 'ok');
  const closed = new Promise((resolve) => channel.onClose(resolve));
  await outcome(channel.leave());
  await closed;
  // The raw socket push the client's API would not send once left.
  const reply = new Promise((resolve) => socket.onMessage((m) => { if (m.ref === 'raw-1') resolve(m); }));
  socket.push({ topic: 'room:nojoin', event: 'ping', payload: {}, ref: 'raw-1', join_ref: null });
  const m = await within(3000, reply, 'reply');
  assert.equal(m.event, 'phx_reply');
  assert.deepEqual(m.payload, { status: 'error', response: { reason: 'unmatched topic' } });
});

test('VersionOtherThan2IsRefused', async () => {
  const socket = connect({ vsn: '1.0.0' });
  const event = await within(3000, new Promise((resolve) => socket.onClose(resolve)), 'close');
  socket.disconnect();
  assert.equal(event.code, 1008);
  assert.match(event.reason, /vsn=2\.0\.0/);
});

// Below the client's API: what a frame it would never send gets (topic_subscriber::close,
// after what was queued before it).
test('FrameThatIsNotJsonClosesWith1007AfterTheRepliesBeforeIt', async () => {
  const ws = new WebSocket(`${endpoint}/websocket?vsn=2.0.0`);
  const received = [];
  ws.on('message', (data) => received.push(JSON.parse(data.toString())));
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  ws.send('[null,"1","phoenix","heartbeat",{}]');
  ws.send('["1","2","room:raw"');
  const [code, reason] = await within(3000, new Promise((resolve) => ws.on('close', (c, r) => resolve([c, r.toString()]))), 'close');
  assert.equal(code, 1007);
  assert.match(reason, /^malformed JSON at byte \d+$/);
  assert.deepEqual(received, [[null, '1', 'phoenix', 'phx_reply', { status: 'ok', response: {} }]]);
});

test('BinaryFrameClosesWith1003', async () => {
  const ws = new WebSocket(`${endpoint}/websocket?vsn=2.0.0`);
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  ws.send(Buffer.from([0, 1, 2]));
  const code = await within(3000, new Promise((resolve) => ws.on('close', resolve)), 'close');
  assert.equal(code, 1003);
});
