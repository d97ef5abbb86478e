#pragma once
// TorchScript modules built in C++ with Module::define, as torch.jit.script (or
// torch.jit.trace) would save them from Python; for the tests of model files.
#include <ATen/ATen.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/utils.h>

#include <string>

namespace ampbench::test_modules {

/// A module of the class a Python nn.Dropout scripts (or traces) to.
inline torch::jit::Module dropout(bool traced) {
    torch::jit::Module d("__torch__.torch.nn.modules.dropout.Dropout");
    d.register_attribute("training", c10::BoolType::get(), true);
    // Tracing bakes the mode in as a constant; scripting reads the flag.
    d.define(traced ? "def forward(self, x):\n    return torch.dropout(x, 0.5, True)\n"
                    : "def forward(self, x):\n    return torch.dropout(x, 0.5, self.training)\n");
    return d;
}

/// in → hidden → ReLU → Dropout → out, as a scripted Python MLP.
inline torch::jit::Module mlp(int in, int hidden, int out, bool traced = false,
                              const char* forward_tail = "") {
    torch::manual_seed(7);
    torch::jit::Module m("__torch__.Net");
    m.register_attribute("training", c10::BoolType::get(), true);
    // As nn.Linear holds them: weight [out, in], trainable.
    m.register_parameter("w1", (at::randn({hidden, in}) * 0.1).requires_grad_(), false);
    m.register_parameter("b1", at::zeros({hidden}).requires_grad_(), false);
    m.register_parameter("w2", (at::randn({out, hidden}) * 0.1).requires_grad_(), false);
    m.register_parameter("b2", at::zeros({out}).requires_grad_(), false);
    m.register_module("drop", dropout(traced));
    m.define(std::string("def forward(self, x):\n"
                         "    h = torch.relu(torch.linear(x.flatten(1), self.w1, self.b1))\n"
                         "    return torch.linear(self.drop.forward(h), self.w2, self.b2)") +
             forward_tail + "\n");
    return m;
}

}  // namespace ampbench::test_modules
