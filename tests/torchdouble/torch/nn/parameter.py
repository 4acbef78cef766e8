# torch.nn.parameter of the test double: Parameter(data, requires_grad=True)
# (pytorch/pytorch torch/nn/parameter.py @v2.4.0), a Tensor that a Module
# registers in _parameters. PyTorch's Parameter shares data's storage; the
# double's takes data's block over (data is left empty), which holds the
# same memory for as long as the parameter lives.
from .. import Tensor


class Parameter(Tensor):
    def __init__(self, data, requires_grad=True):
        Tensor.__init__(self, data.shape, data.dtype, data.device, data._block)
        data._block = None
        self.requires_grad = requires_grad
