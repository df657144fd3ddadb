/**
 * Decisions the serving path hands to a small component instead of deciding inline: what prefill does with a
 * prompt its pool cannot hold, what an abort does with pages a transfer may still be writing, what an engine
 * does when its configured window exceeds its pools, which cache scopes prefill searches for a prompt's cached
 * prefix pages. Each interface carries its production implementation as
 * a constant; an engine takes another only through {@link dev.pagewarden.core.fault.FaultHooks}.
 */
package dev.pagewarden.core.policy;
