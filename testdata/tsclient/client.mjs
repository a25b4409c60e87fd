// Calls one tool of an MCP server over Streamable HTTP with a bearer token,
// using the TypeScript SDK's client, and prints what the client reports as
// one JSON line: {"outcome": "result" | "tool-error" | "error", ...}.
//
// usage: node client.mjs URL TOKEN TOOL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "mcpeffect-tsclient", version: "1.0.0" });
let report;
try {
  await client.connect(transport);
  const result = await client.callTool({ name: tool, arguments: {} });
  report = result.isError
    ? { outcome: "tool-error", message: JSON.stringify(result.content) }
    : { outcome: "result" };
} catch (err) {
  report = { outcome: "error", name: err?.constructor?.name, code: err?.code, message: String(err?.message ?? err) };
}
console.log(JSON.stringify(report));
await client.close().catch(() => {});
