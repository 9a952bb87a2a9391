"""The provider fixtures (loopback server, permission to build network providers) for examples."""

from tests.llm.conftest import allow_real_providers, loopback

__all__ = ["allow_real_providers", "loopback"]
