"""Built-in plugins: registered by module path through the same hooks third parties use."""
