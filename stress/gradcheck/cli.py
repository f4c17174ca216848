"""``aclnn-stress gradcheck``: the command's options and its run.

The operator is a declared backward (``--op``, default the mHC backward) whose declaration has a
``[gradcheck]`` section; its case variables (dimensions, scalar and dtype variables) are
options: the default operator's by name (``--B 4``, ``--num-iters 20``: any operator with a
variable of that name takes them too), every operator's with ``--set NAME=VALUE``. Defaults:
the section's ``case`` and ``seed``, then the declaration's.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from stress.backend_option import add_backend_option
from stress.errors import ConfigError
from stress.gradcheck.check import check_options, gradcheck
from stress.gradcheck.elements import DEFAULT_EPS, parse_element, parse_eps
from stress.gradcheck.pair import DEFAULT_OP, GradPair, load_pair
from stress.ops.shape_expr import parse_dim
from stress.ops.spec import Param
from stress.subcommand import Command

_HELP = """\
Central finite differences of the fixed seeded loss L = sum over the forward's outputs of
sum(upstream gradient * output) (its weights are the upstream gradients handed to the
backward) through the forward, for chosen (--element) or sampled (--sample) elements of the
differentiable inputs, over an eps sweep, against the backward operator's gradient. The pair
is the backward declaration's [gradcheck] section (README); by default the mHC backward:
  L = sum(gradHin*hin) + sum(gradHPost*hPost) + sum(gradHRes*hRes), elements of x, phi,
  alpha, bias against aclnnMhcPreSinkhornBackward's gradX, gradPhi, gradAlpha, gradBias.

Classification, per element (f(h): FD at step h; g: the backward's value; S: RMS of g's block,
the whole gradient unless [gradcheck] blocks declares groups (mHC: gradX; the pre/post/res
group of gradPhi rows or gradBias; the gradAlpha element itself)):
  noise      n(h) = q/2h, q the loss quantum: float64 reference 2^-53*sum|terms of L|; backend
             forward sqrt(sum (w*out*u)^2) with u = 2^-8 bf16 hin, 2^-11 fp16, 2^-19 fp32 outputs
  estimate   f* = the Richardson extrapolation of two consecutive steps minimising t + 3*sigma
             (t: change from the previous extrapolation, sigma: propagated noise)
  unconverged  t > 3*sigma_t + 1e-2*max(|f*|, S)  (the sweep does not settle)
  biased     |f* - g| > 3*(sigma + t) + tol, tol = rtol*max(|g|, S), rtol = [gradcheck] rtol
             (1e-3) for fp32 gradients, at least 2^-7 for bf16 and 2^-10 for fp16 ones;
             sign flip: opposite signs, both above that threshold
  agrees     otherwise
Columns: backward g, FD per step, FD* = f*, noise sigma, f*-g, rel = (f*-g)/max(|g|, S),
resolves (the smallest rel it would call biased: (3*(sigma + t) + tol)/max(|g|, S)), verdict.
A row is noise-limited when it resolves no better than 2e-2.
A bf16 device forward (--fd backend) makes FD of elements feeding a bf16 output noisy: the
noise floor is printed, and errors below it cannot be seen.

exit codes: 0 no element biased (unconverged ones are a warning), 1 some element biased,
            2 bad options, declaration or environment (e.g. the backend lacks the operator)
"""


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _case_params(pair: GradPair) -> list[Param]:
    """The backward's case variables: its parameters that are not C parameters."""
    c_names = set(pair.backward.signature.names)
    return [p for p in pair.backward.params if p.name not in c_names]


def _default_case_params() -> tuple[list[Param], dict[str, Any]]:
    """The default operator's case variables and its [gradcheck] case (without loading its
    forward: parser building stays cheap)."""
    from stress import ops

    spec, decl = ops.get(DEFAULT_OP), ops.declaration_of(DEFAULT_OP)
    c_names = set(spec.signature.names)
    return [p for p in spec.params if p.name not in c_names], dict(decl.gradcheck.case)


def _add_case_options(p: argparse.ArgumentParser) -> None:
    """The default operator's case variables as options, ``--set`` and ``--seed``."""
    params, case = _default_case_params()
    shape = p.add_argument_group(f"case ({DEFAULT_OP}'s variables; defaults: its [gradcheck] case)")
    for par in params:
        default = case.get(par.name, par.default if par.default is not None else "derived")
        kind = par.kind if par.kind in (int, float) else str
        shape.add_argument(
            _option(par.name), type=kind, default=None, dest=f"case_{par.name}",
            metavar=par.name.upper(), help=f"{par.doc.split(' (default')[0]} (default {default})",
        )  # fmt: skip
    shape.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="any case variable of --op's operator (repeatable), e.g. --set H=64",
    )  # fmt: skip
    shape.add_argument("--seed", type=int, default=None, help="default: its [gradcheck] seed")


def _arguments(p: argparse.ArgumentParser) -> None:
    add_backend_option(
        p,
        "which CANN runs the operators (default: $STRESS_BACKEND, else auto); loaded only when "
        "--fd backend or --backward backend needs it",
    )
    p.add_argument(
        "--op",
        default=DEFAULT_OP,
        metavar="NAME|FILE",
        help="the backward operator: a catalogue name or a declaration file with a [gradcheck] "
        "section (default %(default)s)",
    )
    _add_case_options(p)
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
        default=None,
        help="evaluate the loss through the float64 numpy forward (the default where the pair "
        "declares one) or the backend's forward operator (the default otherwise; bf16 outputs "
        "make it noisy: the noise floor is printed)",
    )
    what.add_argument(
        "--backward",
        choices=("backend", "reference"),
        default="backend",
        help="the gradient under test: the backend's backward operator on its forward's saved "
        "tensors (default), or the backward's numpy reference",
    )
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")


#: float64 copies of an input the reference forward and backward hold at once (inputs,
#: outputs, gradients, FD perturbations): the estimate the size check uses.
_X_COPIES = 8


def _set_value(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--set {text!r}: expected NAME=VALUE, e.g. --set H=64")
    for kind in (int, float):
        try:
            return name.strip(), kind(value)
        except ValueError:
            pass
    return name.strip(), {"true": True, "false": False}.get(value, value)


def _raw_case(args: argparse.Namespace, pair: GradPair) -> tuple[dict[str, Any], dict[str, str]]:
    """The case's raw values (defaults, then options, then --set) and each value's option."""
    names = {p.name for p in _case_params(pair)}
    raw, option_of = dict(pair.spec.case), {}
    given = [(k[5:], v, _option(k[5:])) for k, v in vars(args).items() if k.startswith("case_")]
    given += [(*_set_value(t), f"--set {_set_value(t)[0]}") for t in args.set]
    for name, value, option in given:
        if value is None:
            continue
        if name not in names:
            raise ConfigError(
                f"{option}: {pair.name} has no case variable {name!r}; its variables: "
                f"{', '.join(sorted(names))} (give them with --set NAME=VALUE)"
            )
        raw[name], option_of[name] = value, option
    for name in names:
        option_of.setdefault(
            name, _option(name) if hasattr(args, f"case_{name}") else f"--set {name}"
        )
    return raw, option_of


def _check_size(pair: GradPair, params: dict[str, Any], option_of: dict[str, str]) -> None:
    """Every dimension of the differentiable inputs >= 1 (the check needs elements), and the
    float64 working set within the default size budget (stress.engine.call.case_size), before
    anything is allocated."""
    from stress.engine.call.case_size import default_max_case_bytes, human

    dims = pair.shape_dims()
    for name in dims:
        if params[name] < 1:
            opt = option_of[name]
            raise ConfigError(
                f"{opt} {params[name]}: the gradient check needs at least one element; use "
                f"{opt} >= 1"
            )
    _check_nonempty(pair, params, option_of)
    shapes = pair.shapes(params)
    nbytes = sum(math.prod(s) for s in shapes.values()) * 8 * _X_COPIES
    limit = default_max_case_bytes()
    if limit is not None and nbytes > limit:
        big = max(shapes, key=lambda t: math.prod(shapes[t]))
        given = " ".join(f"{option_of[d]} {params[d]}" for d in dims)
        raise ConfigError(
            f"{given} ({math.prod(shapes[big])} elements of {big}): the float64 check needs "
            f"about {human(nbytes)}, over a quarter of host memory ({human(limit)}); use "
            "smaller dimensions"
        )


def _check_nonempty(pair: GradPair, params: dict[str, Any], option_of: dict[str, str]) -> None:
    """No tensor of the backward empty for a dimension variable at 0 (mHC's --num-iters 0
    empties the saved sumOut and normOut): one line naming the option, before the operator
    would refuse the case with its own status."""
    from stress.ops.resolve import resolve

    dims = {d.name: d for d in pair.backward_decl.dims}
    zero = {name for name in dims if params.get(name) == 0}
    if not zero:
        return
    values = resolve(pair.backward_decl, params)
    for tensor, raw in pair.backward_decl.params.items():
        declared = raw.get("shape") if isinstance(raw, dict) else None
        shape = getattr(values.get(tensor), "shape", None)
        if not isinstance(declared, list) or shape is None or len(shape) != len(declared):
            continue
        for item, size in zip(declared, shape, strict=True):
            names = zero & set(parse_dim(item).names) if size == 0 else set()
            if names:
                name = min(names)
                default = pair.spec.case.get(name, dims[name].default)
                hint = f" (its default: {default})" if default else ""
                raise ConfigError(
                    f"{option_of[name]} 0: leaves {pair.name}'s {tensor} empty (shape "
                    f"[{', '.join(map(str, declared))}] = {tuple(shape)}); the gradient check "
                    f"needs non-empty tensors; use {option_of[name]} >= 1{hint}"
                )


def _parse_case(pair: GradPair, args: argparse.Namespace) -> tuple[dict[str, Any], dict]:
    raw, option_of = _raw_case(args, pair)
    try:
        params = pair.backward.parse_params(raw, "aclnn-stress gradcheck")
    except ConfigError as exc:
        msg = str(exc)
        for name, opt in option_of.items():
            msg = msg.replace(f"field '{name}'", f"option {opt}")
        raise ConfigError(msg) from None
    return params, option_of


def _cmd_gradcheck(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.acl.errors import AclError
    from stress.gradcheck import render

    pair = load_pair(args.op)
    if args.fd is None:
        args.fd = "reference" if pair.has_fd_reference else "backend"
    params, option_of = _parse_case(pair, args)
    seed = pair.spec.seed if args.seed is None else args.seed
    eps = parse_eps(args.eps)
    _check_size(pair, params, option_of)
    check_options(pair, params, args.fd, args.backward)
    shapes = pair.shapes(params)
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
    render.header(console, params, seed, eps, args.fd, args.backward, shown, pair)
    try:
        with render.progress(console) as tick:
            result = gradcheck(
                params, seed, elements, sample=sample, eps=eps, fd=args.fd,
                backward=args.backward, backend=args.backend, progress=tick, op=pair.name,
            )  # fmt: skip
    except AclError as exc:
        hint = (
            f" (the operator rejected this case: see the constraints of {exc.api} in its header)"
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


COMMAND = Command(
    "gradcheck",
    help="finite-difference check of a declared backward's gradients",
    description=_HELP,
    arguments=_arguments,
    run=_cmd_gradcheck,
    preformatted=True,
)
