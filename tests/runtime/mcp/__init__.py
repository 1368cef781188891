"""Tests of the MCP client sources, configuration and server face."""
