#!/usr/bin/env bash
# Quick start 1: train a truth probe on your own CSV, then read how it transfers to another topic.
# Usage: bash examples/01_probe_on_your_csv.sh [WORKDIR]   (smollm2-135m, about 2-4 minutes on 2 cores)
set -euo pipefail
cd "${1:-.}"

# A CSV of statements you know to be true (1) or false (0). Without a group column, true/false
# twins like these are put in one CV fold automatically (the output says how many groups).
cat > mine.csv <<'CSV'
statement,label
The sun rises in the east.,1
The sun rises in the west.,0
A week has seven days.,1
A week has nine days.,0
Spiders have eight legs.,1
Spiders have six legs.,0
Bees make honey.,1
Bees make milk.,0
Snow is white.,1
Snow is black.,0
Paris is in France.,1
Paris is in Brazil.,0
Fish live in water.,1
Fish live in trees.,0
Gold is a metal.,1
Gold is a gas.,0
Cows eat grass.,1
Cows eat stones.,0
An hour has sixty minutes.,1
An hour has ten minutes.,0
CSV

# 5-fold group-CV AUROC on your rows, and the probe saved for later (higher score = false)
liedar probe train --model smollm2-135m --data mine.csv --layer 12 --probe logistic --output probe.npz

# transfer: train on each topic, test on the other (off-diagonal cells of the printed table)
liedar probe eval --model smollm2-135m --data mine.csv numbers --layer 12 --output transfer/
