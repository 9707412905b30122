"""Writes the close prices it saw as a self-contained Plotly chart (the
artifact chart.html, plotly.js embedded: no network needed to write or to
open it)."""
import plotly.graph_objects as go

closes = []


def on_data(ctx, history):
    if ctx.symbol == "SYNA":
        closes.append(ctx.bar.close)


def on_finish(ctx):
    fig = go.Figure(go.Scatter(y=closes, mode="lines", name="SYNA"))
    path = ctx.artifact_path("chart.html")
    fig.write_html(path, include_plotlyjs=True, auto_open=False)
    return {"html": path}
