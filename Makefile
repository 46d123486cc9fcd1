# The two entry points: `make demo` and `make test`. Both install what is
# missing (scripts/setup), configure with Ninja and build.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: setup configure build demo test asan tsan tsan-collectives fuzz fuzz-smoke fuzz-onnx fuzz-proto format check-format tidy clean bench

setup:
	@bash scripts/setup

$(BUILD)/build.ninja:
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null

configure: setup $(BUILD)/build.ninja

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The example MLP compiled for the cpu platform, checked against the
# interpreter, then timed.
demo: build
	@$(BUILD)/tools/axle-run examples/mlp.hlo --platform=cpu --reference_platform=interpreter \
	  --print_literals --seed=1 --iterations=100

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Axle against PyTorch and the machine's limits; writes docs/PERFORMANCE.md.
bench: setup
	@bash bench/run.sh

# The whole suite under ASan + UBSan (docs/CONTRIBUTING.md). UBSan reports
# carry a stack; a caller's UBSAN_OPTIONS wins.
asan:
	@UBSAN_OPTIONS="$${UBSAN_OPTIONS:-print_stacktrace=1}" \
	  $(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DAXLE_SANITIZE=ON"

# ThreadSanitizer (docs/CONTRIBUTING.md) on the tests whose code runs on
# several threads: the runtime (streams, RunAsync, concurrent runs), the
# cpu platform (intra-op pool, oneDNN's OpenMP team), custom calls and the
# collectives' transports (in-process threads, Gloo over loopback TCP;
# `make tsan TSAN_TESTS="axle_collectives_test axle_collectives_gloo_test"`
# runs those alone). The whole suite under TSan is too slow for a shared
# machine; TSAN_TESTS picks the binaries. scripts/tsan.supp says what it
# suppresses and why.
TSAN_TESTS ?= axle_runtime_test axle_ffi_test axle_cpu_runtime_test \
  axle_custom_call_examples_test axle_aliasing_example_test \
  axle_collectives_test axle_collectives_gloo_test
tsan: setup
	@cmake -S . -B build-tsan -G Ninja -DAXLE_TSAN=ON >/dev/null
	@cmake --build build-tsan --target $(TSAN_TESTS) -j $(JOBS)
	@for test in $(TSAN_TESTS); do \
	  binary=$$(find build-tsan -name $$test -type f -perm -u+x | head -n 1); \
	  echo "== $$binary"; \
	  AXLE_CONFORMANCE_DIR=$(CURDIR)/../shared/conformance/hlo \
	  TSAN_OPTIONS="$${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/scripts/tsan.supp}" \
	    $$binary --gtest_brief=1 || exit 1; \
	done

# ThreadSanitizer over the collectives' transports alone, in minutes: their
# sources and tests instrumented, linked against $(BUILD)'s libraries
# (scripts/tsan-collectives says how).
tsan-collectives: configure
	@cmake --build $(BUILD) --target axle_collectives_gloo_test -j $(JOBS)
	@bash scripts/tsan-collectives $(BUILD)

fuzz: setup
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DAXLE_FUZZ=ON >/dev/null
	@cmake --build build-fuzz --target hlo_parser_fuzzer -j $(JOBS)

# A short fuzzing run of the parser, seeded from the conformance corpus.
CORPUS ?= ../shared/conformance/hlo
FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz
	@mkdir -p build-fuzz/corpus
	@build-fuzz/fuzz/hlo_parser_fuzzer build-fuzz/corpus $(CORPUS)/parser $(CORPUS)/exec $(CORPUS)/other \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
	  >build-fuzz/fuzz.log 2>&1; status=$$?; tail -n 15 build-fuzz/fuzz.log; exit $$status

# Mutated ONNX models through axle-onnx (fuzz/onnx_mutations.py): no crash,
# no hang. ONNX_CASES cases (default 200, a few minutes).
ONNX_CASES ?= 200
fuzz-onnx: build
	@/usr/bin/python3 fuzz/onnx_mutations.py --tool $(BUILD)/tools/axle-onnx --cases $(ONNX_CASES)

# Mutated binary HloModuleProto files through axle-run
# (fuzz/hlo_proto_mutations.py): no crash, no hang. PROTO_CASES cases.
PROTO_CASES ?= 200
fuzz-proto: build
	@/usr/bin/python3 fuzz/hlo_proto_mutations.py --opt $(BUILD)/tools/axle-opt \
	  --run $(BUILD)/tools/axle-run --cases $(PROTO_CASES)

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

# What CI checks: every file formatted, clang-tidy clean on changed files
# (TIDY_BASE=<commit> widens the range; default: the newest commit).
check-format:
	@bash scripts/check-format

tidy: build
	@TIDY_BASE=$(TIDY_BASE) BUILD=$(BUILD) bash scripts/check-tidy

clean:
	@rm -rf $(BUILD)
