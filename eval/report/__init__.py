"""report.md from the results files of a folder, and the figures docs/ and the README quote."""
