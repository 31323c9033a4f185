#!/usr/bin/env bash
# Runs llvm_two_drivers RUNS times, JOBS at a time, each under glibc's malloc checker with its own MALLOC_PERTURB_;
# prints every run that did not exit 0 (status and the end of its stderr) and a count.
#   gcc -O2 -o /tmp/llvm_two_drivers benchmarks/probes/llvm_two_drivers.c -lEGL -lGLESv2 -lOpenCL -lvulkan -lpthread
#   benchmarks/probes/llvm_two_drivers.sh /tmp/llvm_two_drivers [RUNS=400] [JOBS=2] [ROUNDS=4]
set -u
bin=$1; runs=${2:-400}; jobs=${3:-2}; rounds=${4:-4}
out=$(mktemp -d)
one() {
  local i=$1
  VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json EGL_PLATFORM=surfaceless \
  LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 MALLOC_CHECK_=3 MALLOC_PERTURB_=$(( i % 254 + 1 )) \
    timeout 120 "$bin" "$rounds" > "$out/$i.txt" 2>&1
  local rc=$?
  [[ $rc == 0 ]] && rm -f "$out/$i.txt" || echo "run $i (MALLOC_PERTURB_=$(( i % 254 + 1 ))): exit $rc: $(tail -3 "$out/$i.txt" | tr '\n' ' ')"
}
for ((i = 1; i <= runs; i++)); do
  one "$i" &
  (( i % jobs == 0 )) && wait
done
wait
failed=$(ls "$out" | wc -l)
echo "llvm_two_drivers: $runs runs x $rounds rounds, $jobs at a time: $failed did not exit 0 (kept in $out)"
