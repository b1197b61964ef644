    folder, path = posixpath.normpath(folder), posixpath.normpath(path)
    return path == folder or path.startswith(folder.rstrip("/") + "/")
