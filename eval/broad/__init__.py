"""Broad questions (what is this about, summarize, why, list, yes/no, compare, who is, what next,
what was said), scored as TREC RAG 2024 scores answers: by the vital and okay nuggets they hold."""
