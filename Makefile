# The README's two Quick start commands: `make demo` and `make test`. Both do their own set-up.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: deps configure build demo test bench sanitize fuzz clean

deps:
	@bash scripts/install-deps.sh

# Ninja and ccache are looked for after deps has installed them, so a fresh machine's first build uses both.
$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $$(command -v ninja >/dev/null 2>&1 && echo "-G Ninja") \
	  $$(command -v ccache >/dev/null 2>&1 && echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache") \
	  -DCMAKE_BUILD_TYPE=Release -DCS_WERROR=ON

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo builds only the clustersim binary.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target clustersim
	./$(BUILD)/clustersim run scenarios/quickstart.yaml --out $(BUILD)/out/quickstart

# Ends with the ten slowest tests, so that a test that grows slow is seen.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS); rc=$$?; cd $(CURDIR) && scripts/slowest-tests.sh $(BUILD); \
	  exit $$rc

# ASan and UBSan over the fast tests (not in CI: it doubles the build, past the 12-minute budget).
sanitize: deps
	./scripts/sanitize.sh

# libFuzzer over every input reader, 60 s each (clang; not in CI for the same reason).
fuzz: deps
	./scripts/fuzz.sh 60

bench: build
	./bench/engine.sh $(BUILD)
	./bench/cost_model.sh $(BUILD)
	./bench/alltoall.sh $(BUILD)
	./bench/plan.sh $(BUILD)
	./bench/mapreduce.sh $(BUILD)
	./bench/scale.sh $(BUILD)
	./bench/stragglers.sh $(BUILD)
	./bench/gpu_jobs.sh $(BUILD)
	./bench/goodput.sh $(BUILD)
	./bench/frontier.sh $(BUILD)
	./bench/spark.sh $(BUILD) --speed-only

clean:
	rm -rf $(BUILD)
