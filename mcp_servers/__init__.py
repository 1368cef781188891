"""MCP servers paraagent ships: ToolEnv, the simulator of real tool interfaces."""
