// Kept for source compatibility: the roofline now lives in kernel_cost_model.hpp (RooflineModel).
#pragma once
#include "models/cost/kernel_cost_model.hpp"
