"""The site: placeholders rendered into pages, the code they show, the three questions, runs made for
them, translations and the build cache. The top layer: it may import every other package.
"""
