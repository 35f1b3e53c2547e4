// SPDX-License-Identifier: GPL-2.0
/* digits.c - the multipliers of digits.h's vector steps (see there why
 * they are variables). */
#include "digits.h"

uint16_t ntp_digits_k100[16] __attribute__((aligned(32))) = {
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
};
uint16_t ntp_digits_k10[16] __attribute__((aligned(32))) = {
	10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10,
};
