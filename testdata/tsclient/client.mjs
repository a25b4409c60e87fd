// Drives an MCP server with the TypeScript SDK's client, as hosts built
// on it do, and prints what the client reports, as JSON.
//
// usage: node client.mjs URL TOKEN TOOL
//   calls one tool over Streamable HTTP with a bearer token, and prints
//   one line: {"outcome": "result" | "tool-error" | "error", ...}.
//
// usage: node client.mjs CONFIG
//   CONFIG is JSON: how to connect, over Streamable HTTP ({"url", "token"})
//   or stdio ({"command", "env"}); how the person answers elicitations
//   ("elicit": "accept" | "decline" | "cancel", or absent for a client
//   without the capability); whether to declare the tool-resolution
//   extension ("resolution": true); and the operations to make, in order:
//   {"op": "call", "name", "arguments"}, {"op": "read", "uri"},
//   {"op": "prompt", "name"}, {"op": "resolve", "name", "arguments"},
//   {"op": "listTools"}, {"op": "capabilities"} (the server's, as the
//   client read them). A call with "idempotencyKey" sends it in its params,
//   where SEP-3182 puts it. It prints a JSON array, a report per operation:
//   {"op", "outcome", "name", "code", "message", "data", "text", "asked"}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const args = process.argv.slice(2);
const config = args.length === 1
  ? JSON.parse(args[0])
  : { url: args[0], token: args[1], ops: [{ op: "call", name: args[2], arguments: {} }], single: true };

const transport = config.url
  ? new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
    })
  : new StdioClientTransport({ command: config.command, env: { ...process.env, ...(config.env ?? {}) }, stderr: "inherit" });

const capabilities = {};
if (config.elicit) capabilities.elicitation = { form: {} };
if (config.resolution) capabilities.extensions = { "io.modelcontextprotocol/tool-resolution": {} };
const client = new Client({ name: "mcpeffect-tsclient", version: "1.0.0" }, { capabilities });

let asked = [];
if (config.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: config.elicit };
  });
}

function failure(err) {
  return {
    outcome: "error",
    name: err?.constructor?.name,
    code: err?.code,
    message: String(err?.message ?? err),
    data: err?.data,
  };
}

function texts(content) {
  return (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

const reports = [];
try {
  await client.connect(transport);
  for (const op of config.ops) {
    asked = [];
    let report;
    try {
      switch (op.op) {
        case "call": {
          const params = { name: op.name, arguments: op.arguments ?? {} };
          if (op.idempotencyKey !== undefined) params.idempotencyKey = op.idempotencyKey;
          const result = await client.callTool(params);
          report = result.isError
            ? { outcome: "tool-error", message: JSON.stringify(result.content) }
            : { outcome: "result", text: texts(result.content) };
          break;
        }
        case "read": {
          const result = await client.readResource({ uri: op.uri });
          report = { outcome: "result", text: result.contents.map((c) => c.text).join("\n") };
          break;
        }
        case "prompt": {
          const result = await client.getPrompt({ name: op.name });
          report = { outcome: "result", text: result.messages.map((m) => m.content.text).join("\n") };
          break;
        }
        case "resolve": {
          const result = await client.request(
            { method: "tools/resolve", params: { name: op.name, arguments: op.arguments ?? {} } },
            ResultSchema,
          );
          report = { outcome: "result", data: result };
          break;
        }
        case "capabilities": {
          report = { outcome: "result", data: client.getServerCapabilities() };
          break;
        }
        case "listTools": {
          const result = await client.listTools();
          report = { outcome: "result", data: result.tools };
          break;
        }
        default:
          throw new Error(`unknown operation ${op.op}`);
      }
    } catch (err) {
      report = failure(err);
    }
    reports.push({ op: op.op, asked, ...report });
  }
} catch (err) {
  reports.push({ op: "connect", ...failure(err) });
}
console.log(JSON.stringify(config.single ? reports[0] : reports));
await client.close().catch(() => {});
