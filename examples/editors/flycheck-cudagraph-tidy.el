;;; flycheck-cudagraph-tidy.el --- cudagraph-tidy for Flycheck (Emacs)
;; Runs cudagraph-tidy on the saved file of a C++ or CUDA buffer. Set
;; `flycheck-cudagraph-tidy-build-path' to the build directory holding
;; compile_commands.json.
(require 'flycheck)

(defvar flycheck-cudagraph-tidy-build-path "build"
  "Build directory (compile_commands.json) for cudagraph-tidy, relative to the project root.")

(flycheck-define-checker cudagraph-tidy
  "CUDA graph capture hazards, found by cudagraph-tidy."
  :command ("cudagraph-tidy"
            (eval (concat "-p=" (expand-file-name flycheck-cudagraph-tidy-build-path
                                                  (flycheck-default-directory))))
            "--quiet" source-original)
  :predicate flycheck-buffer-saved-p
  :error-patterns
  ((error line-start (file-name) ":" line ":" column ": error: " (message) line-end)
   (warning line-start (file-name) ":" line ":" column ": warning: " (message) line-end)
   (info line-start (file-name) ":" line ":" column ": note: " (message) line-end))
  :modes (c++-mode c++-ts-mode cuda-mode))

(add-to-list 'flycheck-checkers 'cudagraph-tidy)
(provide 'flycheck-cudagraph-tidy)
;;; flycheck-cudagraph-tidy.el ends here
