"""
example.py - runs a README example the way a reader would type it into
an interactive session: statements run in order, and the value of every
top-level expression statement (ds[0, 5, 2], ds.stats(), ...) is recorded
so a test can assert what the REPL would have shown.
"""
import ast
import textwrap


class Shown(list):
    """(source text, value) of each top-level expression, in order."""

    def value(self, source):
        for text, val in self:
            if text == source:
                return val
        raise KeyError(source)


def run(code, namespace):
    """Executes code in namespace; returns the Shown values."""
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    shown = Shown()
    body = []
    for node in tree.body:
        if isinstance(node, ast.Expr):
            text = ast.get_source_segment(code, node)
            call = ast.Call(func=ast.Name("__shown", ast.Load()),
                            args=[ast.Constant(text), node.value],
                            keywords=[])
            node = ast.Expr(call)
        body.append(node)
    tree.body = body
    ast.fix_missing_locations(tree)
    namespace["__shown"] = lambda text, val: shown.append((text, val))
    exec(compile(tree, "<README example>", "exec"), namespace)
    return shown
