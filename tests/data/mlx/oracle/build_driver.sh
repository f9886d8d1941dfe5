#!/bin/sh
# Builds libmlx (MLX's C++ core, CPU only) from MLX's source and links
# driver (driver.cpp: mlx_lm's plan computed by mlx::core) and quantdrv
# (quantdrv.cpp: mlx::core::quantize over quant/'s inputs) against it.
# usage: build_driver.sh MLX_SRC BUILD_DIR   (run from this directory)
# Debian 12: apt-get install cmake libopenblas-dev liblapacke-dev
#            nlohmann-json3-dev libfmt-dev
# libmlx takes about 80 objects of -O3 C++: on 2 shared cores, hours
# (make resumes where it stopped).
set -e
SRC=$1 B=$2
cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DMLX_BUILD_METAL=OFF -DMLX_BUILD_GGUF=OFF -DMLX_BUILD_TESTS=OFF \
  -DMLX_BUILD_EXAMPLES=OFF -DMLX_BUILD_BENCHMARKS=OFF -DMLX_BUILD_PYTHON_BINDINGS=OFF \
  -DUSE_SYSTEM_FMT=ON
(cd "$B" && nice -n 15 make -j1 mlx)
for p in driver quantdrv; do
  g++ -std=gnu++20 -O2 -DMLX_STATIC -DFMT_HEADER_ONLY=1 -I"$SRC" -I/usr/include/nlohmann \
    $p.cpp -o $p "$B/libmlx.a" -lopenblas -llapacke -llapack -lpthread -ldl
done
