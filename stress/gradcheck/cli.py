"""``aclnn-stress gradcheck``: the command's options and its run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.gradcheck.check import gradcheck
from stress.gradcheck.elements import (
    DEFAULT_EPS,
    parse_element,
    parse_eps,
    tensor_shapes,
)
from stress.ops.mhc import MHC_PRE_SINKHORN_BACKWARD

_HELP = """\
Central finite differences of the fixed seeded loss
  L = sum(gradHin*hin) + sum(gradHPost*hPost) + sum(gradHRes*hRes)
(its weights are the incoming gradients handed to the backward) through the forward, for
chosen (--element) or sampled (--sample) elements of x, phi, alpha, bias, over an eps sweep,
against aclnnMhcPreSinkhornBackward's gradient.

Classification, per element (f(h): FD at step h; g: the backward's value; S: RMS of g's block:
gradX; the pre/post/res group of gradPhi rows or gradBias; the gradAlpha element itself):
  noise      n(h) = q/2h, q the loss quantum: float64 reference 2^-53*sum|terms of L|; backend
             forward sqrt(sum (w*out*u)^2) with u = 2^-8 bf16 hin, 2^-11 fp16, 2^-19 fp32 outputs
  estimate   f* = the Richardson extrapolation of two consecutive steps minimising t + 3*sigma
             (t: change from the previous extrapolation, sigma: propagated noise)
  unconverged  t > 3*sigma_t + 1e-2*max(|f*|, S)  (the sweep does not settle)
  biased     |f* - g| > 3*(sigma + t) + tol, tol = rtol*max(|g|, S), rtol = 1e-3 (fp32
             gradients), 2^-7 (bf16 gradX), 1e-3 (fp16 gradX); sign flip: opposite signs,
             both above that threshold
  agrees     otherwise
Columns: backward g, FD per step, FD* = f*, noise sigma, f*-g, rel = (f*-g)/max(|g|, S),
resolves (the smallest rel it would call biased: (3*(sigma + t) + tol)/max(|g|, S)), verdict.
A row is noise-limited when it resolves no better than 2e-2.
A bf16 device forward (--fd backend) makes FD of elements feeding hin noisy: the noise floor
is printed, and errors below it cannot be seen.

exit codes: 0 no element biased (unconverged ones are a warning), 1 some element biased,
            2 bad options or environment (e.g. the backend lacks the operator)
"""

_OPTION_OF = {
    "B": "--B",
    "S": "--S",
    "N": "--N",
    "C": "--C",
    "dtype": "--dtype",
    "num_iters": "--num-iters",
    "hc_eps": "--hc-eps",
    "norm_eps": "--norm-eps",
}


def add_cli(subparsers: Any) -> None:
    """Add the ``gradcheck`` subcommand to ``aclnn-stress``'s subparsers."""
    spec = MHC_PRE_SINKHORN_BACKWARD
    p = subparsers.add_parser(
        "gradcheck",
        help="finite-difference check of the mHC backward's gradients (DESIGN item 3)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--backend",
        choices=("auto", "sim", "cann"),
        default=None,
        help="which CANN runs the operators (default: $STRESS_BACKEND, else auto); loaded only "
        "when --fd backend or --backward backend needs it",
    )
    shape = p.add_argument_group("case (the report's large shape by default)")
    shape.add_argument("--B", type=int, default=4, help="batch (default 4)")
    shape.add_argument("--S", type=int, default=256, help="sequence length (default 256)")
    shape.add_argument(
        "--N", type=int, default=spec.param("N").default, help="hyper-connections (default 4)"
    )
    shape.add_argument("--C", type=int, default=1024, help="channels (default 1024)")
    shape.add_argument(
        "--dtype", default="bf16", help="dtype of x/hin/gradHin/gradX: bf16 (default) or fp16"
    )
    shape.add_argument("--seed", type=int, default=20261023, help="default 20261023")
    shape.add_argument(
        "--num-iters",
        type=int,
        default=spec.param("num_iters").default,
        help="Sinkhorn iterations (default %(default)s; the operator requires 20)",
    )
    shape.add_argument(
        "--hc-eps", type=float, default=spec.param("hc_eps").default, help="hcEps (%(default)s)"
    )
    shape.add_argument(
        "--norm-eps",
        type=float,
        default=spec.param("norm_eps").default,
        help="normEps of the forward's RMS norm (%(default)s)",
    )
    what = p.add_argument_group("what to check")
    what.add_argument(
        "--element",
        action="extend",
        nargs="+",
        default=[],
        metavar="T[i,...]",
        help="element(s) to check, e.g. bias[8] phi[12,2048] x[0,3,1,17] alpha[2] (repeatable)",
    )
    what.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="K",
        help="also check K seeded random elements of each tensor (default 2 when no --element)",
    )
    what.add_argument(
        "--eps",
        default=",".join(f"{e:g}" for e in DEFAULT_EPS),
        help="comma-separated FD steps (default %(default)s)",
    )
    what.add_argument(
        "--fd",
        choices=("reference", "backend"),
        default="reference",
        help="evaluate the loss through the float64 numpy forward (default) or the backend's "
        "forward operator (bf16 hin makes it noisy; the noise floor is printed)",
    )
    what.add_argument(
        "--backward",
        choices=("backend", "reference"),
        default="backend",
        help="the gradient under test: the backend's backward operator on its forward's saved "
        "tensors (default), or the numpy reference backward in float32",
    )
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")
    p.set_defaults(func=_cmd_gradcheck)


#: float64 copies of x the reference forward and backward hold at once (inputs, hin, gradX, FD
#: perturbations): the estimate the size check uses.
_X_COPIES = 8


def _check_size(params: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> None:
    """Every dimension >= 1 (the check needs elements), and the float64 working set within the
    default size budget (stress.engine.budget), before anything is allocated."""
    import math

    from stress.engine.budget import default_max_case_bytes, human

    for name in ("B", "S", "N", "C"):
        if params[name] < 1:
            raise ConfigError(
                f"{_OPTION_OF[name]} {params[name]}: the gradient check needs at least one "
                f"element; use {_OPTION_OF[name]} >= 1"
            )
    nbytes = sum(math.prod(s) for s in shapes.values()) * 8 * _X_COPIES
    limit = default_max_case_bytes()
    if limit is not None and nbytes > limit:
        tokens = params["B"] * params["S"]
        raise ConfigError(
            f"--B {params['B']} --S {params['S']} ({tokens} tokens): the float64 check needs "
            f"about {human(nbytes)}, over a quarter of host memory ({human(limit)}); use "
            "fewer tokens (--B, --S) or channels (--C)"
        )


def _cmd_gradcheck(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.acl.errors import AclError
    from stress.gradcheck import render

    raw = {
        name: getattr(args, opt.lstrip("-").replace("-", "_")) for name, opt in _OPTION_OF.items()
    }
    try:
        params = MHC_PRE_SINKHORN_BACKWARD.parse_params(raw, "aclnn-stress gradcheck")
    except ConfigError as exc:
        msg = str(exc)
        for name, opt in _OPTION_OF.items():
            msg = msg.replace(f"field '{name}'", f"option {opt}")
        raise ConfigError(msg) from None
    eps = parse_eps(args.eps)
    shapes = tensor_shapes(params)
    _check_size(params, shapes)
    elements = [parse_element(e, shapes) for e in args.element]
    sample = args.sample if args.sample is not None else (0 if elements else 2)
    if sample < 0:
        raise ConfigError(f"--sample {sample}: must be >= 0")
    json_path = Path(args.json) if args.json else None
    if json_path is not None and not json_path.parent.is_dir():
        raise ConfigError(f"--json {args.json}: directory {json_path.parent} does not exist")

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))
    uses_backend = args.fd == "backend" or args.backward == "backend"
    shown = (args.backend or "$STRESS_BACKEND/auto") if uses_backend else "not used"
    render.header(console, params, args.seed, eps, args.fd, args.backward, shown)
    try:
        with render.progress(console) as tick:
            result = gradcheck(
                params,
                args.seed,
                elements,
                sample=sample,
                eps=eps,
                fd=args.fd,
                backward=args.backward,
                backend=args.backend,
                progress=tick,
            )
    except AclError as exc:
        hint = (
            " (the operator rejected this case; the A2/A3 kernels need N=4, num_iters=20, C%128==0)"
            if exc.api.startswith("aclnn")
            else ""
        )
        raise ConfigError(f"{exc}{hint}") from None
    render.report(console, result)
    if json_path is not None:
        try:
            json_path.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        except OSError as exc:
            raise ConfigError(f"--json {args.json}: cannot write: {exc.strerror}") from None
        console.print(f"JSON written to {json_path}")
    return result.exit_code
