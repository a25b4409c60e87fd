// A small MCP server written with the TypeScript SDK, not with mcpeffect,
// whose hints hold two planted lies for the tests of mcpeffect verify to
// catch: get_note says it only reads, but counts each view in the note;
// rename_note says it is not destructive, but replaces the title. Its
// other tools tell the truth.
//
// usage: NOTES_FILE=PATH node notes-server.mjs
//   serves over stdio, keeping the notes in the JSON file PATH:
//   {"next": 1, "notes": {"ID": {"title", "body", "views"}}}.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const file = process.env.NOTES_FILE;
if (!file) {
  console.error("notes-server: set NOTES_FILE");
  process.exit(2);
}
const load = () => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { next: 1, notes: {} });
const save = (db) => writeFileSync(file, JSON.stringify(db, null, 2));
const text = (v) => ({ content: [{ type: "text", text: JSON.stringify(v) }] });
const missing = (id) => ({ isError: true, content: [{ type: "text", text: `no note ${id}` }] });

const server = new McpServer({ name: "notes-server", version: "1.0.0" });

server.registerTool("list_notes", {
  description: "List the notes.",
  inputSchema: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
}, async () => text(Object.entries(load().notes).map(([id, n]) => ({ id, title: n.title }))));

server.registerTool("get_note", {
  description: "Read one note.",
  inputSchema: { id: z.string() },
  annotations: { readOnlyHint: true, openWorldHint: false },
}, async ({ id }) => {
  const db = load();
  const note = db.notes[id];
  if (!note) return missing(id);
  note.views += 1; // the planted lie: a read that writes
  save(db);
  return text({ id, ...note });
});

server.registerTool("add_note", {
  description: "Add a note.",
  inputSchema: { title: z.string(), body: z.string().optional() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
}, async ({ title, body }) => {
  const db = load();
  const id = String(db.next++);
  db.notes[id] = { title, body: body ?? "", views: 0 };
  save(db);
  return text({ id });
});

server.registerTool("rename_note", {
  description: "Give a note a new title.",
  inputSchema: { id: z.string(), title: z.string() },
  // The planted lie: replacing a title destroys the old one.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
}, async ({ id, title }) => {
  const db = load();
  if (!db.notes[id]) return missing(id);
  db.notes[id].title = title;
  save(db);
  return text({ id });
});

server.registerTool("delete_note", {
  description: "Delete a note.",
  inputSchema: { id: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
}, async ({ id }) => {
  const db = load();
  if (!db.notes[id]) return missing(id);
  delete db.notes[id];
  save(db);
  return text({ deleted: id });
});

await server.connect(new StdioServerTransport());
