"""Results people look at: a self-contained HTML report and a notebook card.

``report_html`` / ``write_report``  one HTML file (inline SVG figures, a little script, no network)
``folder_images``                    a run folder's figures the report embeds as they are
``display``, ``ResultCard``          the notebook card (also ``res.pdpboot``: the registered DataTree accessor)
``figures``                          the figures of a result, the SVG drawing, a run's recorded origin

Layer: above ``plotting`` (it reads results; never computes a statistic), below ``workflow``,
which writes ``report.html`` into every run folder.
"""

from .page import Image, ResultCard, card_html, display, folder_images, report_html, write_report

__all__ = ["Image", "ResultCard", "card_html", "display", "folder_images", "report_html", "write_report"]
