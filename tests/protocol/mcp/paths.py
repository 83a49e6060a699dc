"""Files the MCP client tests share."""

from pathlib import Path

HERE = Path(__file__).parent
ECHO_CONTRACT = HERE / "contracts" / "debug.echo.yaml"
