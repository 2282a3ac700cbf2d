"""The styles of draguard's HTML pages (lint, simulate, audit), in a module of their own: the
simulate and audit pages import them without the lint page's fix diffs (fix.splice and the
YAML they read)."""

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d1d1f;max-width:80rem}
h1{font-size:1.6rem;margin:0 0 .3rem} h2{font-size:1.2rem;margin:2rem 0 .6rem;border-bottom:1px solid #ddd}
.counts span{display:inline-block;margin-right:1rem;padding:.2rem .6rem;border-radius:.3rem;font-weight:600}
.error{background:#fde2e1;color:#8a1c14} .warning{background:#fff1cc;color:#7a5600} .info{background:#dff1fb;color:#0b5574}
table{border-collapse:collapse;margin:.4rem 0 1rem} td,th{padding:.25rem .7rem;border-bottom:1px solid #eee;text-align:left}
.finding{border:1px solid #e3e3e3;border-radius:.4rem;padding:.7rem 1rem;margin:.8rem 0}
.finding .where{font-family:ui-monospace,Menlo,monospace;color:#555} .sev{font-size:.8rem;padding:.1rem .4rem;border-radius:.2rem}
pre{background:#f6f8fa;padding:.6rem;border-radius:.3rem;overflow-x:auto;font-size:12.5px}
pre .add{color:#116329} pre .del{color:#82071e} .muted{color:#777}
"""
