/* framegraph._C.SourceReader (source_reader.c): cached reads of attribute/key chains;
   framegraph._C.CachedHash: a base class whose instances are hashed once. */
#ifndef FRAMEGRAPH_SOURCE_READER_H
#define FRAMEGRAPH_SOURCE_READER_H
#include <Python.h>

/* Adds SourceReader and CachedHash to the module; -1 with an exception on failure. */
int fg_source_reader_init(PyObject *module);

#endif
