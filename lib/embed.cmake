# Writes a .cpp defining `const char* sv::SYMBOL` with the text of IN.
file(READ ${IN} content)
file(WRITE ${OUT} "namespace sv { extern const char* const ${SYMBOL}; const char* const ${SYMBOL} = R\"SVEMBED(${content})SVEMBED\"; }\n")
