/* control/epoch.h - whether an epoch's re-partition is worth its moves: the
 * rule both drivers' epochs apply (experiment/subcluster.h,
 * sym_subclusters_epoch), issue 31.
 *
 * An epoch re-partitions from the rates counted over its last `secs`
 * seconds (symphony-centralized-orchestration.md, Section 4.7). Counts are
 * noisy: a Poisson count of rate R over T seconds has a standard deviation
 * of sqrt(R T), so a rate measured so has one of sqrt(R / T). A change whose
 * gain that noise alone can make moves models or GPUs back and forth from
 * one epoch to the next, each move costing loads (and, when memory is tight,
 * stalls). So, with k standard deviations (partition.noise_sigmas; k <= 0:
 * any gain, as published):
 *   - a new assignment of models (the local search's, which only moves on a
 *     gain) is taken when the objective drops by at least k sqrt(R / T), R the
 *     total rate;
 *   - when the models stay, a new split of the GPUs is taken when its busiest
 *     part's GPUs are less busy than the current split's busiest by more than
 *     k standard deviations of that estimate, relative 1 / sqrt(R_b T) with
 *     R_b the rate of the current busiest part (busy fractions grow about in
 *     proportion to their rates). A busiest part that cannot meet its SLO
 *     (infinitely busy) always takes a split that can.
 *
 * Pure: numbers in, a yes or no out.
 */
#ifndef SYM_CONTROL_EPOCH_H
#define SYM_CONTROL_EPOCH_H

#include <stdbool.h>

/* A new assignment whose objective is `gain` below the current one's, from
 * rates summing to total_rate counted over secs: taken? */
bool sym_epoch_assign_pays(double gain, double total_rate, double secs, double k);

/* A new GPU split for the same models: the busiest part's busy estimate now
 * (cur, from rate cur_rate) and under the new split (next). Taken? */
bool sym_epoch_split_pays(double cur, double cur_rate, double next, double secs, double k);

#endif
