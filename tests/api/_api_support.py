"""Constants shared by the API tests (a module of its own: conftest.py is not importable by
name)."""

SECRET = "sk-rmaudit-test-7f3a9c1e5b2d4f60a8e1"
KEY_ENV = "RMAUDIT_TEST_API_KEY"
