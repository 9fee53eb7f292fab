import { describe, expect, it } from "vitest";
import { LaunchedStdioTransport } from "../../src/mcp";

describe("LaunchedStdioTransport", () => {
  it("a server that floods stdout past the message size bound loses its session; the gateway process keeps running", async () => {
    // 11 MiB without a newline: more than one JSON-RPC line may hold. Before, the read buffer threw inside the
    // stdout listener, an uncaught exception that ended the whole gateway.
    const transport = new LaunchedStdioTransport({
      argv: [process.execPath, "-e", "process.stdout.write('x'.repeat(11 * 1024 * 1024)); setInterval(() => {}, 1000)"],
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/",
    });
    const errors: Error[] = [];
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    transport.onerror = (err) => errors.push(err);
    await transport.start();
    await closed;
    expect(errors.map((e) => e.message).join("\n")).toMatch(/MCP server wrote a message larger than 10 MiB.*session closed/);
    await transport.close();
  });
});
