// The official MCP SDK's client, as the tests here load it: `who` names the test in the message
// that says how to install it.
export async function loadSdk(who) {
  try {
    return {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
    };
  } catch (e) {
    console.error(`${who}: the MCP SDK is not installed (${e.message}); run scripts/setup (npm ci in test/mcp)`);
    process.exit(1);
  }
}
