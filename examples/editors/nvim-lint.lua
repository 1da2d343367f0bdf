-- Neovim with nvim-lint (https://github.com/mfussenegger/nvim-lint):
-- cudagraph-tidy on save for C++ and CUDA buffers. Findings become
-- diagnostics; notes of the call chain become hints at their own lines.
local lint = require('lint')
lint.linters.cudagraph_tidy = {
  cmd = 'cudagraph-tidy',
  args = { '-p=build', '--quiet' },
  stdin = false,
  append_fname = true,
  stream = 'stdout',
  ignore_exitcode = true, -- 1 means findings
  parser = require('lint.parser').from_pattern(
    '^([^:]+):(%d+):(%d+): (%a+): (.*)$',
    { 'file', 'lnum', 'col', 'severity', 'message' },
    {
      error = vim.diagnostic.severity.ERROR,
      warning = vim.diagnostic.severity.WARN,
      note = vim.diagnostic.severity.HINT,
    },
    { source = 'cudagraph-tidy' }
  ),
}
lint.linters_by_ft.cpp = { 'cudagraph_tidy' }
lint.linters_by_ft.cuda = { 'cudagraph_tidy' }
vim.api.nvim_create_autocmd('BufWritePost', {
  callback = function() lint.try_lint() end,
})
