# lit configuration for cudagraph-tidy.
import os
import shutil

import lit.formats
import lit.util

config.name = "cudagraph-tidy"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cpp", ".cu", ".test", ".c"]
config.excludes = ["Inputs", "corpus", "corpus-families", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cudagraph_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.cudagraph_bin_dir, config.environment.get("PATH", "")])

src = config.cudagraph_src_root
inputs = os.path.join(src, "test", "Inputs")
plugin = os.path.join(config.cudagraph_lib_dir, "CudaGraphTidyModule.so")
python = config.python_executable

config.substitutions.append(
    ("%expect_exit", "%s %s" % (python, os.path.join(src, "test", "expect_exit.py"))))
config.substitutions.append(("%python", python))
config.substitutions.append(("%srcroot", src))
config.substitutions.append(("%bindir", config.cudagraph_bin_dir))
config.substitutions.append(("%libdir", config.cudagraph_lib_dir))
config.substitutions.append(("%cudagraph_tidy", os.path.join(config.cudagraph_bin_dir, "cudagraph-tidy")))
config.substitutions.append(("%cudagraph_plugin", plugin))
# A sanitizer build: reports end the test (halt_on_error), and the plugin's
# instrumented code gets its runtimes preloaded into clang-tidy-19.
clang_tidy_19 = config.clang_tidy_19
if getattr(config, "sanitize", ""):
    config.available_features.add("sanitize")
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.environment["LSAN_OPTIONS"] = "suppressions=%s" % os.path.join(
        src, "scripts", "sanitize", "lsan.supp")
    if config.sanitizer_preload:
        # One path, usable where a test passes it as an argument.
        wrapper = os.path.join(config.test_exec_root, "clang-tidy-19-sanitized")
        os.makedirs(config.test_exec_root, exist_ok=True)
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nLD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0 exec %s "$@"\n'
                    % (config.sanitizer_preload, clang_tidy_19))
        os.chmod(wrapper, 0o755)
        clang_tidy_19 = wrapper
config.substitutions.append(("%clang_tidy_19", clang_tidy_19))
# What LD_PRELOAD gets to load the injection library by hand.
inject = os.path.join(config.cudagraph_lib_dir, "libcudagraph-inject.so")
if getattr(config, "sanitizer_preload", ""):
    inject = config.sanitizer_preload + ":" + inject
config.substitutions.append(("%preload_inject", inject))
config.substitutions.append(("%torch_stubs", os.path.join(inputs, "libtorch", "include")))
config.substitutions.append(("%cuda_stubs", os.path.join(inputs, "cuda", "include")))
config.substitutions.append(("%xla_stubs", os.path.join(inputs, "xla", "include")))
config.substitutions.append(("%catch2_stubs", os.path.join(inputs, "catch2", "include")))
config.substitutions.append(("%cuda_root", config.cuda_root))
config.substitutions.append(
    ("%check_cudagraph_tidy",
     "%s %s --tidy %s" % (python, os.path.join(src, "test", "check_cudagraph_tidy.py"),
                          os.path.join(config.cudagraph_bin_dir, "cudagraph-tidy"))))

# Optional parts, gated with REQUIRES.
if config.clang_tidy_19 and os.path.exists(config.clang_tidy_19):
    config.available_features.add("clang-tidy-19")
if os.path.exists(os.path.join(config.cuda_root, "include", "cuda_runtime.h")):
    config.available_features.add("cuda13")
if os.path.exists("/usr/include/torch/csrc/api/include/torch/torch.h"):
    config.available_features.add("libtorch-debian")
cupti_headers = [os.path.join(config.cuda_root, d, "cupti.h") for d in
                 ("include", os.path.join("extras", "CUPTI", "include"))]
if any(os.path.exists(h) for h in cupti_headers):
    config.available_features.add("cupti")
if shutil.which("nvcc") or os.path.exists(os.path.join(config.cuda_root, "bin", "nvcc")):
    config.available_features.add("nvcc")
torch211 = os.environ.get("CUDAGRAPH_TORCH211_INCLUDE", "/work/torch211-include")
if os.path.exists(os.path.join(torch211, "torch", "csrc", "api", "include", "torch", "torch.h")):
    config.available_features.add("libtorch-211")
    config.substitutions.append(("%torch211", torch211))
