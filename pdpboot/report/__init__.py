"""Results people look at: a self-contained HTML report and a notebook card.

``report_html`` / ``write_report``  one HTML file (inline SVG figures, a little script, no network)
``folder_images``                    a run folder's figures the report embeds as they are
``figures``, ``svg``, ``markdown``   the figures of a result, the SVG drawing, ``summary.md`` as HTML

Layer: above ``plotting`` (it reads results; never computes a statistic), below ``workflow``,
which writes ``report.html`` into every run folder.
"""

from .page import Image, folder_images, report_html, write_report

__all__ = ["Image", "folder_images", "report_html", "write_report"]
