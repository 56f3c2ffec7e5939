// The gateway's /mcp driven by the npm SDK's Client over StreamableHTTPClientTransport (issue
// #28, "Tests"): the tools are listed, every inputSchema passes the JSON Schema draft 2020-12
// meta-schema (ajv's 2020 build), every tool is called with arguments generated from its
// inputSchema and answers what the REST request for the same input answers, a broken
// constraint is isError with its pointer, and the tool behind an authentication layer is
// refused by that layer when called without credentials.
//
// The REST request for a tool's arguments is built from the OpenAPI document, not from the
// tool: operationId is the tool's name, its path, query, header and cookie parameters take
// the arguments of their names, and the arguments left are the JSON body (or the argument
// "body", when the tool nests it). Two projections of one route meeting is the point.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';

import { apiToken, startGateway } from './gateway.mjs';

const credentials = { Authorization: `Bearer ${apiToken}` };
const expectedTools = ['getAccount', 'listOrgOrders', 'placeOrder', 'placeOrgOrder'];

// --- arguments from a schema -------------------------------------------------------------

// A string `pattern` matches, for the patterns tools use: anchors, literals, \d \w, classes
// with ranges, and the quantifiers ? * + {m} {m,} {m,n}. Each atom is repeated its minimum
// plus two times (within its maximum), cycling through the class's characters.
function stringMatching(pattern) {
  const source = pattern.replace(/^\^/, '').replace(/\$$/, '');
  let out = '';
  for (let i = 0; i < source.length;) {
    let choices;
    if (source[i] === '[') {
      const end = source.indexOf(']', i + 2);
      assert.ok(end > 0 && source[i + 1] !== '^', `a class the generator reads: ${pattern}`);
      choices = [];
      const body = source.slice(i + 1, end);
      for (let j = 0; j < body.length; ++j) {
        if (body[j + 1] === '-' && j + 2 < body.length) {
          for (let c = body.charCodeAt(j); c <= body.charCodeAt(j + 2); ++c)
            choices.push(String.fromCharCode(c));
          j += 2;
        } else {
          choices.push(body[j] === '\\' ? body[++j] : body[j]);
        }
      }
      i = end + 1;
    } else if (source[i] === '\\') {
      const escaped = source[i + 1];
      choices = escaped === 'd' ? ['1', '2', '3']
        : escaped === 'w' ? ['a', 'b', '1', '_']
        : [escaped];
      i += 2;
    } else {
      assert.ok(!'().|'.includes(source[i]), `an atom the generator reads: ${pattern}`);
      choices = [source[i++]];
    }
    let [min, max] = [1, 1];
    const quantifier = source.slice(i).match(/^(\?|\*|\+|\{(\d+)(,(\d*))?\})/);
    if (quantifier) {
      i += quantifier[0].length;
      if (quantifier[1] === '?') [min, max] = [0, 1];
      else if (quantifier[1] === '*') [min, max] = [0, Infinity];
      else if (quantifier[1] === '+') [min, max] = [1, Infinity];
      else [min, max] = [Number(quantifier[2]), quantifier[3] === undefined ? Number(quantifier[2])
                         : quantifier[4] === '' ? Infinity : Number(quantifier[4])];
    }
    const count = Math.min(max, min + 2);
    for (let k = 0; k < count; ++k) out += choices[(out.length * 7 + k) % choices.length];
  }
  assert.match(out, new RegExp(pattern, 'u'), `the generated "${out}" matches ${pattern}`);
  return out;
}

const formatExamples = {
  email: 'ada@example.com', date: '2026-12-24', 'date-time': '2026-12-24T10:00:00Z',
};

// A valid value for `schema`: the keywords the tools' schemas use, and an error on others
// (type, $ref into root.$defs, enum, const, default, minimum and maximum, minLength and
// maxLength, pattern, format, properties: every one, optional ones too, items, minItems).
function valueFor(schema, root, name) {
  if (schema.$ref) {
    const target = schema.$ref.match(/^#\/\$defs\/(.+)$/);
    assert.ok(target && root.$defs?.[target[1]], `a $ref into $defs: ${schema.$ref}`);
    return valueFor(root.$defs[target[1]], root, name);
  }
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if ('default' in schema) return schema.default;
  const types = [schema.type].flat().filter((t) => t !== 'null');
  const type = types[0];
  switch (type) {
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum ?? -1) + 1;
      const high = schema.maximum ?? (schema.exclusiveMaximum ?? low + 11) - 1;
      return Math.min(high, low + 1);
    }
    case 'boolean':
      return true;
    case 'string': {
      if (schema.pattern) return stringMatching(schema.pattern);
      if (schema.format) {
        assert.ok(schema.format in formatExamples, `a format generated: ${schema.format}`);
        return formatExamples[schema.format];
      }
      const length = Math.min(schema.maxLength ?? Infinity, Math.max(schema.minLength ?? 0, 6));
      return `${name}-value`.padEnd(length, 'x').slice(0, length);
    }
    case 'array': {
      const count = Math.max(schema.minItems ?? 0, 1);
      return Array.from({ length: count }, () => valueFor(schema.items ?? {}, root, name));
    }
    case 'object': {
      const object = {};
      for (const [key, member] of Object.entries(schema.properties ?? {}))
        object[key] = valueFor(member, root, key);
      return object;
    }
    default:
      throw new Error(`no value generated for ${name}'s schema ${JSON.stringify(schema)}`);
  }
}

// --- the REST request for a tool's arguments ----------------------------------------------

function operationFor(document, name) {
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item))
      if (operation?.operationId === name)
        return { path, method: method.toUpperCase(), operation,
                 parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])] };
  throw new Error(`no operation ${name} in /openapi.json`);
}

function resolved(schema, document) {
  const target = schema?.$ref?.match(/^#\/components\/schemas\/(.+)$/);
  return target ? document.components.schemas[target[1]] : schema;
}

async function restCall(base, document, name, args, headers = {}) {
  const { path, method, operation, parameters } = operationFor(document, name);
  const rest = { ...args };
  const query = new URLSearchParams();
  const sent = { Accept: 'application/json', ...headers };
  const cookies = [];
  let target = path;
  for (const parameter of parameters) {
    assert.ok(!parameter.$ref, `inline parameters: ${JSON.stringify(parameter)}`);
    if (!(parameter.name in rest)) continue;
    const value = rest[parameter.name];
    delete rest[parameter.name];
    if (parameter.in === 'path')
      target = target.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query')
      [value].flat().forEach((v) => query.append(parameter.name, String(v)));
    else if (parameter.in === 'header') sent[parameter.name] = String(value);
    else cookies.push(`${parameter.name}=${value}`);
  }
  if (cookies.length) sent.Cookie = cookies.join('; ');
  let body;
  if (operation.requestBody) {
    const schema = resolved(operation.requestBody.content['application/json'].schema, document);
    const nested = 'body' in rest && !('body' in (schema.properties ?? {}));
    body = JSON.stringify(nested ? rest.body : rest);
    sent['Content-Type'] = 'application/json';
  } else {
    assert.deepEqual(rest, {}, `${name}: every argument is a parameter`);
  }
  const url = `${base}${target}${query.size ? `?${query}` : ''}`;
  const response = await fetch(url, { method, headers: sent, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

// --- the tests -----------------------------------------------------------------------------

async function connect(base, headers, fetchImpl) {
  const client = new Client({ name: 'waypoint-sdk-test', version: '1.0.0' });
  const url = new URL(`${base}/mcp`);
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: fetchImpl }));
  return client;
}

function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

describe('the gateway through the MCP SDK client', () => {
  let gateway;
  let client;
  let tools;
  let document;
  const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });
  const argumentsOf = new Map();

  before(async () => {
    gateway = await startGateway();
    client = await connect(gateway.base, credentials);
    // Listed first, on the client that calls them: listTools() is where the SDK compiles each
    // outputSchema, and callTool() then checks structuredContent against it.
    tools = (await client.listTools()).tools;
    document = await (await fetch(`${gateway.base}/openapi.json`)).json();
  });
  after(async () => {
    await client?.close();
    await gateway?.stop();
  });

  it('lists the named typed routes, each inputSchema a valid draft 2020-12 schema', () => {
    assert.deepEqual(tools.map((t) => t.name).sort(), expectedTools);
    for (const tool of tools) {
      for (const which of ['inputSchema', 'outputSchema']) {
        const schema = tool[which];
        if (!schema) continue;
        assert.ok(ajv.validateSchema(schema),
                  `${tool.name}'s ${which} against the 2020-12 meta-schema: ${ajv.errorsText()}`);
        ajv.compile(schema);  // strict: unknown keywords, unresolved $refs throw
      }
      assert.equal(tool.inputSchema.type, 'object', `${tool.name}: MCP wants an object schema`);
    }
  });

  it('answers each tool call with what the REST request for the same input answers', async () => {
    // Writes first, so that the read sees orders. Each call's arguments come from its
    // inputSchema and are checked against it. The rule: a read-only tool's structuredContent
    // equals the REST body; a tool that creates (placeOrder, placeOrgOrder: ids from a counter)
    // is called after the REST request, and the two answers are equal but for "id", which
    // differs (each call placed its own order).
    const order = [...tools].sort((a, b) => Number(a.annotations?.readOnlyHint ?? false)
                                            - Number(b.annotations?.readOnlyHint ?? false));
    for (const tool of order) {
      const args = valueFor(tool.inputSchema, tool.inputSchema, tool.name);
      const valid = ajv.compile(tool.inputSchema);
      assert.ok(valid(args), `${tool.name}: generated arguments ${JSON.stringify(args)} are valid: `
                             + ajv.errorsText(valid.errors));
      argumentsOf.set(tool.name, args);
      const rest = await restCall(gateway.base, document, tool.name, args, credentials);
      assert.ok(rest.status >= 200 && rest.status < 300,
                `${tool.name} over REST with ${JSON.stringify(args)}: ${rest.status} `
                + JSON.stringify(rest.body));
      const result = await client.callTool({ name: tool.name, arguments: args });
      assert.notEqual(result.isError, true, `${tool.name}: ${text(result)}`);
      assert.deepEqual(JSON.parse(text(result)), result.structuredContent,
                       `${tool.name}: the text block is the structured content`);
      if (tool.annotations?.readOnlyHint) {
        assert.deepEqual(result.structuredContent, rest.body, `${tool.name}: tool and REST`);
      } else {
        const { id: toolId, ...toolRest } = result.structuredContent;
        const { id: restId, ...restRest } = rest.body;
        assert.deepEqual(toolRest, restRest, `${tool.name}: tool and REST, but for the id`);
        assert.notEqual(toolId, restId, `${tool.name}: each call made its own`);
      }
    }
  });

  it('has a write through a tool land where REST reads it', async () => {
    const args = { ...argumentsOf.get('placeOrgOrder'), org: 'written-by-tool' };
    const result = await client.callTool({ name: 'placeOrgOrder', arguments: args });
    const placed = result.structuredContent;
    const page = await restCall(gateway.base, document, 'listOrgOrders', { org: args.org });
    assert.deepEqual(page.body.orders, [placed]);
  });

  it('has the SDK check structuredContent against the outputSchema it listed', async () => {
    // The control: a client whose tools/list answer is changed in transit so that placeOrder's
    // outputSchema requires a member the gateway never sends; the SDK must reject the call.
    const tampering = async (url, init) => {
      const response = await fetch(url, init);
      const body = init?.body ? JSON.parse(init.body) : {};
      if (body.method !== 'tools/list') return response;
      const message = await response.json();
      const tool = message.result.tools.find((t) => t.name === 'placeOrder');
      tool.outputSchema.required.push('never_sent');
      return new Response(JSON.stringify(message),
                          { status: response.status, headers: response.headers });
    };
    const control = await connect(gateway.base, {}, tampering);
    try {
      await control.listTools();
      await assert.rejects(
        control.callTool({ name: 'placeOrder', arguments: argumentsOf.get('placeOrder') }),
        /does not match the tool's output schema/);
    } finally {
      await control.close();
    }
  });

  it('answers a call that breaks a constraint with isError and the pointer', async () => {
    const args = { ...argumentsOf.get('placeOrgOrder'), quantity: 5000 };
    const rest = await restCall(gateway.base, document, 'placeOrgOrder', args);
    assert.equal(rest.status, 422);
    assert.equal(rest.body.pointer, '/quantity');
    const result = await client.callTool({ name: 'placeOrgOrder', arguments: args });
    assert.equal(result.isError, true);
    assert.match(text(result), /^422 .*\(pointer "\/quantity"\)/);
    assert.equal(result.structuredContent, undefined);
  });

  it('has the authentication layer refuse a tool called without credentials', async () => {
    const rest = await restCall(gateway.base, document, 'getAccount', {});
    assert.equal(rest.status, 401);
    const anonymous = await connect(gateway.base, {});
    try {
      const result = await anonymous.callTool({ name: 'getAccount', arguments: {} });
      assert.equal(result.isError, true);
      assert.equal(text(result), `401 Unauthorized: ${rest.body.detail}`);
    } finally {
      await anonymous.close();
    }
  });
});
