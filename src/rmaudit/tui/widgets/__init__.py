"""Widgets shared by the TUI's screens and panels."""
