"""Fitting the files the package ships: the span reader's ranker and type table on RealTime QA back
numbers, the language model's calibration on a RealTime QA 2022 run; written by ``shipped.py``."""
