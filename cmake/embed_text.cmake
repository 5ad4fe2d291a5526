# Writes a C++ file defining kafel::shipped_tuning_json() with the text of IN.
# Run as: cmake -DIN=file -DOUT=file.cpp -P embed_text.cmake
file(READ ${IN} _text)
file(WRITE ${OUT} "// Generated from ${IN} by cmake/embed_text.cmake; do not edit.\n"
  "namespace kafel {\nconst char* shipped_tuning_json() {\n  return R\"kafel_json(${_text})kafel_json\";\n}\n}  // namespace kafel\n")
