"""Results people look at: a self-contained HTML report and a notebook card."""

from .page import Image, ResultCard, card_html, display, folder_images, report_html, write_report

__all__ = ["Image", "ResultCard", "card_html", "display", "folder_images", "report_html", "write_report"]
