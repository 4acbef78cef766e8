# torch.autograd of the test double: backward(tensors, ...) as the module
# attribute that Tensor.backward calls (pytorch/pytorch torch/_tensor.py
# @v2.4.0: torch.autograd.backward(self, gradient, retain_graph,
# create_graph, inputs=inputs)); the double has no graph, so it runs the
# callable a test tensor carries in ._grad_fn, if any.
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    fn = getattr(tensors, "_grad_fn", None)
    if fn is not None:
        fn()
