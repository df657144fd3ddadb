package dev.pagewarden.platform.database;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;

/** Puts the platform's DataSource (embedded or external) behind the database circuit breaker. */
@Configuration(proxyBeanMethods = false)
class DatabaseGuardConfiguration {

    @Bean
    static BeanPostProcessor guardedDataSource(ObjectProvider<DatabaseAvailability> availability) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                return bean instanceof DataSource ds && !(bean instanceof GuardedDataSource)
                        ? new GuardedDataSource(ds, availability.getObject()) : bean;
            }
        };
    }
}
