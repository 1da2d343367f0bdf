// Stand-in for torch/all.h.
#pragma once

#include <torch/torch.h>
