"""Built-in plugins: one module each, importing only `vscheduler.plugin_api`."""
