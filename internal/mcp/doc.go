// Package mcp serves OpenSandbox tools over the Model Context Protocol, on
// stdio or streamable HTTP, for coding agents. The tool set, argument names
// and types, and the registry rules are those of the official OpenSandbox
// MCP server (opensandbox-mcp 1.1.1), so an agent set up for it works
// unchanged; a few opt-in tools go further. Every call goes through
// internal/client; the protocol itself is the official Go MCP SDK's.
package mcp
