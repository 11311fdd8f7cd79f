# The README's two Quick start commands: `make demo` and `make test`. Both do their own set-up.
BUILD ?= build
JOBS  ?= $(shell nproc)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
LAUNCHER  := $(shell command -v ccache >/dev/null 2>&1 && echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")

.PHONY: deps configure build demo test bench clean

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(GENERATOR) $(LAUNCHER) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/clustersim run scenarios/quickstart.yaml --out $(BUILD)/out/quickstart

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./bench/engine.sh $(BUILD)
	./bench/cost_model.sh $(BUILD)
	./bench/alltoall.sh $(BUILD)
	./bench/plan.sh $(BUILD)
	./bench/mapreduce.sh $(BUILD)

clean:
	rm -rf $(BUILD)
